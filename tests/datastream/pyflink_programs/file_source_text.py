"""A text file read by FileSource with StreamFormat.text_line_format(): each line one str record (empty lines too;
lines end at \\n, \\r\\n or \\r), from a file path and from the directory holding the file."""

import os
import tempfile

from pyflink.common import Types, WatermarkStrategy
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.connectors.file_system import FileSource, StreamFormat

directory = tempfile.mkdtemp()
path = os.path.join(directory, "lines.txt")
with open(path, "wb") as text:
    text.write("to be, or not to be\n\nthat is the question:\r\nwhether 'tis nöbler\rin the mind".encode("utf-8"))

env = StreamExecutionEnvironment.get_execution_environment()
lines = env.from_source(FileSource.for_record_stream_format(StreamFormat.text_line_format(), path).build(),
                        WatermarkStrategy.no_watermarks(), "file")
lines.print()
lines.map(lambda line: (line, len(line), type(line).__name__),
          output_type=Types.TUPLE([Types.STRING(), Types.INT(), Types.STRING()])).print()
in_directory = env.from_source(FileSource.for_record_stream_format(StreamFormat.text_line_format(), directory)
                               .process_static_file_set().build(), WatermarkStrategy.no_watermarks(), "directory")
in_directory.map(lambda line: "directory: " + line).print()
env.execute()
