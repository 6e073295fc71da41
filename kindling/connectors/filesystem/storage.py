"""Where the files go: a local directory or an S3 bucket, through pyarrow's filesystems.

Publishing never depends on a listing: a staged file becomes visible by one ``rename`` of a
known name on a local disk (atomic), and on S3 by one server-side ``CopyObject`` of a known key
(an object appears whole or not at all) followed by deleting the staged object. Small control
files (the commit log) are written atomically: a temporary file renamed into place locally, one
``PutObject`` on S3.

Entropy injection (``s3.entropy.key``): data file paths get the key replaced by random
characters, which spreads objects across the store's key-space partitions; every other path
(commit log, staging, ``_SUCCESS``) has the key removed, so it stays at a predictable place.
"""

from __future__ import annotations

import os
import posixpath
import random
import string
import uuid
from typing import Optional

import pyarrow.fs as pafs

from kindling.connectors.filesystem.options import FileSystemConfig
from kindling.object_store import explain, is_missing, is_s3, s3_filesystem
from kindling.options import OptionError

CONTROL_DIR = ".kindling"  # commit log and staging; readers skip names starting with '.' or '_'
ENTROPY_ALPHABET = string.ascii_lowercase + string.digits


def _strip_entropy(path: str, key: Optional[str]) -> str:
    if not key or key not in path:
        return path
    stripped = path.replace("/" + key + "/", "/").replace(key, "")
    return stripped.rstrip("/") or stripped


class Storage:
    """A table directory on a local disk or in an S3 bucket, with the operations the sink and source need."""

    def __init__(self, config: FileSystemConfig, attempts: int = 3) -> None:
        self.config = config
        path = config.path
        self.s3 = is_s3(path)
        if self.s3:
            self.fs: pafs.FileSystem = s3_filesystem(config.s3, attempts)
            raw = path.split("://", 1)[1].rstrip("/")
        else:
            self.fs = pafs.LocalFileSystem()
            raw = path[len("file://"):] if path.startswith("file://") else path
            raw = os.path.abspath(os.path.expanduser(raw))
        self.data_template = raw  # may contain the entropy key
        self.root = _strip_entropy(raw, config.entropy_key)
        self.control = posixpath.join(self.root, CONTROL_DIR)

    # --- paths ---------------------------------------------------------------------------------
    def data_root(self) -> str:
        """The root for one new data file: with the entropy key replaced by fresh random characters."""
        key = self.config.entropy_key
        if not key or key not in self.data_template:
            return self.root
        entropy = "".join(random.choice(ENTROPY_ALPHABET) for _ in range(self.config.entropy_length))
        return self.data_template.replace(key, entropy)

    def uri(self, path: str) -> str:
        return ("s3://" if self.s3 else "file://") + path

    # --- operations ----------------------------------------------------------------------------
    def check(self, file_allowed: bool = False) -> None:
        """Fail now, naming the option, if the store cannot be reached or refuses the credentials; ``path`` must be a
        directory unless ``file_allowed`` (a source reads one file as Flink's FileSource does)."""
        try:
            info = self.fs.get_file_info(self.root)
            if self.s3:
                bucket = self.root.split("/", 1)[0]
                self.fs.get_file_info(pafs.FileSelector(bucket, recursive=False, allow_not_found=True))
            elif info.type == pafs.FileType.File and not file_allowed:
                raise OptionError(f"filesystem option 'path' is {self.config.path!r}, which is a file, not a directory")
        except OSError as exc:
            raise OptionError(self._explain(exc)) from None

    def _explain(self, exc: OSError) -> str:
        return explain(exc, self.config.s3, self.config.path, "filesystem option", "path")

    def open_output(self, path: str):
        if not self.s3:
            self.fs.create_dir(posixpath.dirname(path), recursive=True)
        return self.fs.open_output_stream(path)

    def open_input(self, path: str):
        return self.fs.open_input_file(path)

    def read_bytes(self, path: str) -> Optional[bytes]:
        try:
            with self.fs.open_input_stream(path) as stream:
                return stream.read()
        except OSError as exc:
            if is_missing(exc):
                return None
            raise

    def write_atomic(self, path: str, data: bytes) -> None:
        """A whole file appears at ``path`` at once (rename locally, one PUT on S3)."""
        if self.s3:
            with self.fs.open_output_stream(path) as out:
                out.write(data)
            return
        directory = posixpath.dirname(path)
        os.makedirs(directory, exist_ok=True)
        temporary = posixpath.join(directory, f".{posixpath.basename(path)}.{uuid.uuid4().hex}.tmp")
        with open(temporary, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)

    def exists(self, path: str) -> bool:
        return self.fs.get_file_info(path).type == pafs.FileType.File

    def publish(self, staged: str, final: str) -> None:
        """Make a staged file visible under its final name: rename locally, server-side copy on S3."""
        if self.s3:
            self.fs.copy_file(staged, final)
            self.delete(staged)
            return
        os.makedirs(posixpath.dirname(final), exist_ok=True)
        os.replace(staged, final)

    def delete(self, path: str) -> None:
        try:
            self.fs.delete_file(path)
        except OSError as exc:
            if not is_missing(exc):
                raise

    def delete_dir(self, path: str) -> None:
        try:
            self.fs.delete_dir(path)
        except OSError as exc:
            if not is_missing(exc):
                raise

    def list(self, path: str, recursive: bool = True) -> list[pafs.FileInfo]:
        try:
            return self.fs.get_file_info(pafs.FileSelector(path, recursive=recursive, allow_not_found=True))
        except FileNotFoundError:
            return []

    def touch(self, path: str) -> None:
        self.write_atomic(path, b"")

