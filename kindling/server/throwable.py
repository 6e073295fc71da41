"""Flink's ``failure-cause`` on the wire: a Java-serialized ``org.apache.flink.util.SerializedThrowable``.

Flink's REST clients (the ``flink`` CLI, ``RestClusterClient``) read a failed asynchronous
operation's ``failure-cause.serialized-throwable`` as the Base64 of a Java object stream holding
a ``SerializedThrowable`` and print its stringified stack trace. Without it a savepoint failure
would reach the CLI as an unreadable response instead of the reason. The object stream is written
here by hand (Java's documented serialization grammar) for that one class: its three fields, its
``Exception`` and ``Throwable`` superclasses with their published ``serialVersionUID``s, no cause,
no stack trace elements (the text of the failure is in ``fullStringifiedStackTrace``).
"""

from __future__ import annotations

import base64
import struct

_MAGIC = b"\xac\xed\x00\x05"
_TC_NULL, _TC_CLASSDESC, _TC_OBJECT, _TC_STRING, _TC_ARRAY, _TC_ENDBLOCKDATA, _TC_LONGSTRING = (
    0x70, 0x72, 0x73, 0x74, 0x75, 0x78, 0x7C,
)
_SC_WRITE_METHOD, _SC_SERIALIZABLE = 0x01, 0x02

# serialVersionUIDs of the classes in the stream (fixed in their sources).
_SERIALIZED_THROWABLE_UID = 7284183123441947635
_EXCEPTION_UID = -3387516993124229948
_THROWABLE_UID = -3042686055658047285
_BYTE_ARRAY_UID = -5984413125824719648

FLINK_EXCEPTION = "org.apache.flink.util.FlinkException"


def _utf(text: str) -> bytes:
    """Java's modified UTF-8: every UTF-16 code unit on its own (surrogates too), NUL as two bytes."""
    units = struct.unpack(f">{len(text.encode('utf-16-be', 'surrogatepass')) // 2}H", text.encode("utf-16-be", "surrogatepass"))
    out = bytearray()
    for unit in units:
        if 0 < unit < 0x80:
            out.append(unit)
        elif unit < 0x800:
            out += bytes([0xC0 | unit >> 6, 0x80 | unit & 0x3F])
        else:
            out += bytes([0xE0 | unit >> 12, 0x80 | unit >> 6 & 0x3F, 0x80 | unit & 0x3F])
    return bytes(out)


def _short_utf(text: str) -> bytes:
    data = _utf(text)[:0xFFFF]
    return struct.pack(">H", len(data)) + data


def _string(text: str) -> bytes:
    data = _utf(text)
    if len(data) <= 0xFFFF:
        return bytes([_TC_STRING]) + struct.pack(">H", len(data)) + data
    return bytes([_TC_LONGSTRING]) + struct.pack(">Q", len(data)) + data


def _field(type_code: str, name: str, signature: str = "") -> bytes:
    out = type_code.encode() + _short_utf(name)
    if type_code in ("L", "["):
        out += _string(signature)
    return out


def _class_desc(name: str, uid: int, flags: int, fields: list[bytes], superclass: bytes) -> bytes:
    return (
        bytes([_TC_CLASSDESC]) + _short_utf(name) + struct.pack(">qB", uid, flags)
        + struct.pack(">H", len(fields)) + b"".join(fields) + bytes([_TC_ENDBLOCKDATA]) + superclass
    )


def serialized_throwable(class_name: str, message: str, stack_trace: str) -> bytes:
    """The Java object stream of a ``SerializedThrowable`` for an error ``class_name: message``."""
    throwable = _class_desc(
        "java.lang.Throwable", _THROWABLE_UID, _SC_SERIALIZABLE | _SC_WRITE_METHOD,
        [
            _field("L", "cause", "Ljava/lang/Throwable;"),
            _field("L", "detailMessage", "Ljava/lang/String;"),
            _field("[", "stackTrace", "[Ljava/lang/StackTraceElement;"),
            _field("L", "suppressedExceptions", "Ljava/util/List;"),
        ],
        bytes([_TC_NULL]),
    )
    exception = _class_desc("java.lang.Exception", _EXCEPTION_UID, _SC_SERIALIZABLE, [], throwable)
    serialized = _class_desc(
        "org.apache.flink.util.SerializedThrowable", _SERIALIZED_THROWABLE_UID, _SC_SERIALIZABLE,
        [
            _field("L", "fullStringifiedStackTrace", "Ljava/lang/String;"),
            _field("L", "originalErrorClassName", "Ljava/lang/String;"),
            _field("[", "serializedException", "[B"),
        ],
        exception,
    )
    empty_bytes = bytes([_TC_ARRAY]) + _class_desc("[B", _BYTE_ARRAY_UID, _SC_SERIALIZABLE, [], bytes([_TC_NULL])) + struct.pack(">i", 0)
    values = (
        # Throwable's fields (cause, detailMessage, stackTrace, suppressedExceptions), then its writeObject's end.
        bytes([_TC_NULL]) + _string(message) + bytes([_TC_NULL, _TC_NULL, _TC_ENDBLOCKDATA])
        # SerializedThrowable's fields (Exception has none).
        + _string(stack_trace or f"{class_name}: {message}") + _string(class_name) + empty_bytes
    )
    return _MAGIC + bytes([_TC_OBJECT]) + serialized + values


def failure_cause(message: str, stack_trace: str = "", class_name: str = FLINK_EXCEPTION) -> dict[str, str]:
    """Flink's JSON for a ``SerializedThrowable``: ``class``, ``stack-trace`` and ``serialized-throwable``."""
    trace = stack_trace or f"{class_name}: {message}"
    return {
        "class": class_name,
        "stack-trace": trace,
        "serialized-throwable": base64.b64encode(serialized_throwable(class_name, message, trace)).decode("ascii"),
    }
