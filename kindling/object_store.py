"""S3-compatible object stores, reached through pyarrow: Flink's ``s3.*`` settings turned into one client.

Two places write to S3: the filesystem connector (a table's files) and savepoints (a stopped job's
checkpoints copied to ``state.savepoints.dir``). Both build their client here, from the settings Flink's
S3 filesystem plugins read (``s3.endpoint``, ``s3.access-key``, ``s3.secret-key``,
``s3.path.style.access``), so an endpoint or a credential means the same thing to both. Unset
credentials fall back to the AWS default chain (environment, profile, instance role), as on Flink.

>>> settings = S3Settings(endpoint="http://127.0.0.1:8333", access_key=None, secret_key=None,
...                       path_style=True, region=None)
>>> is_s3("s3://bucket/savepoints"), is_s3("/tmp/savepoints")
(True, False)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional

from kindling.options import ConfigOption, bool_option, string_option

if TYPE_CHECKING:
    import pyarrow.fs as pafs

S3_SCHEMES = ("s3://", "s3a://", "s3n://")
S3_CONNECT_TIMEOUT_S = 5.0
S3_REQUEST_TIMEOUT_S = 60.0


# Flink's S3 filesystem settings (its config.yaml keys): a filesystem table's options and a job's configuration.
S3_OPTIONS: tuple[ConfigOption[Any], ...] = (
    string_option("s3.endpoint", None, "S3 endpoint (http://host:port for S3-compatible stores); default: AWS."),
    string_option("s3.access-key", None, "S3 access key; default: the standard AWS credential chain."),
    string_option("s3.secret-key", None, "S3 secret key (never logged or shown)."),
    bool_option("s3.path.style.access", False, "Address buckets as endpoint/bucket (true) instead of bucket.endpoint."),
    string_option("s3.region", None, "S3 region; default: the AWS configuration's, else us-east-1."),
)


@dataclass(frozen=True)
class S3Settings:
    """How to reach an S3-compatible store (the secret is kept out of repr)."""

    endpoint: Optional[str]
    access_key: Optional[str]
    secret_key: Optional[str]
    path_style: bool
    region: Optional[str]

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> "S3Settings":
        """Settings from parsed option values keyed by Flink's names (a table's options or a job's configuration)."""
        return cls(values.get("s3.endpoint"), values.get("s3.access-key"), values.get("s3.secret-key"),
                   bool(values.get("s3.path.style.access")), values.get("s3.region"))

    def __repr__(self) -> str:
        return (f"S3Settings(endpoint={self.endpoint!r}, access_key={'***' if self.access_key else None}, "
                f"path_style={self.path_style}, region={self.region!r})")


def is_s3(path: str) -> bool:
    """Whether ``path`` names an object in an S3 bucket (``s3://``, ``s3a://`` or ``s3n://``)."""
    return str(path).lower().startswith(S3_SCHEMES)


def bucket_path(uri: str) -> str:
    """``bucket/key`` of an S3 URI: the form pyarrow's S3 filesystem addresses objects by."""
    return uri.split("://", 1)[1].strip("/")


def s3_filesystem(settings: S3Settings, attempts: int = 3) -> pafs.S3FileSystem:
    """A pyarrow S3 filesystem for ``settings``, with bounded connect/request timeouts and retries."""
    import pyarrow.fs as pafs  # here: every process reading kindling's configuration imports this module

    kwargs: dict[str, Any] = {
        "connect_timeout": S3_CONNECT_TIMEOUT_S,
        "request_timeout": S3_REQUEST_TIMEOUT_S,
        "retry_strategy": pafs.AwsStandardS3RetryStrategy(max_attempts=attempts),
    }
    if settings.access_key:
        kwargs["access_key"], kwargs["secret_key"] = settings.access_key, settings.secret_key
    if settings.endpoint:
        endpoint, scheme = settings.endpoint, "https"
        if "://" in endpoint:
            scheme, endpoint = endpoint.split("://", 1)
        kwargs["endpoint_override"] = endpoint.rstrip("/")
        kwargs["scheme"] = scheme
    if settings.path_style or settings.endpoint:
        # pyarrow addresses buckets path-style unless told otherwise; AWS itself accepts both.
        kwargs["force_virtual_addressing"] = not settings.path_style and not settings.endpoint
    kwargs["region"] = settings.region or "us-east-1"
    return pafs.S3FileSystem(**kwargs)


def is_missing(exc: OSError) -> bool:
    """Whether a filesystem error says the object or directory is not there (the wording differs by store)."""
    text = str(exc)
    return isinstance(exc, FileNotFoundError) or "NO_SUCH" in text or "not found" in text.lower()


def explain(exc: OSError, settings: S3Settings, path: str, context: str, path_option: str) -> str:
    """A message a user can act on for an S3 error, naming the option at fault (never a secret's value).

    ``context`` says whose options these are ("filesystem option", "configuration option"); ``path_option``
    is the option that named ``path``.
    """
    text = str(exc)
    where = settings.endpoint or "AWS S3"
    if any(code in text for code in ("ACCESS_DENIED", "SIGNATURE_DOES_NOT_MATCH", "INVALID_ACCESS_KEY", "InvalidAccessKeyId",
                                     "SignatureDoesNotMatch", "AccessDenied", "Forbidden", "403")):
        return f"{context} 's3.access-key'/'s3.secret-key': {where} refused the credentials for {path!r}: {text}"
    if any(code in text for code in ("NETWORK_CONNECTION", "Could not connect", "curlCode", "Couldn't resolve", "Timeout", "timed out")):
        return f"{context} 's3.endpoint' = {where!r} cannot be reached: {text}"
    if "NoSuchBucket" in text or "NO_SUCH_BUCKET" in text:
        return f"{context} '{path_option}' = {path!r}: the bucket does not exist: {text}"
    return f"{context} '{path_option}' = {path!r} cannot be accessed: {text}"
