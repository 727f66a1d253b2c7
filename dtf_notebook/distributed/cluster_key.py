"""Cluster keys: the secret that lets a peer talk to a cluster's tasks, written down and read back.

A cluster key is 32 secret bytes; every task and client of a cluster derives its CurveZMQ key pairs from them
(:mod:`~dtf_notebook.distributed.curve`), so a peer without the key cannot even finish a handshake. Written
down (a key file, a cluster file, ``DTF_CLUSTER_KEY``) a key is ``dtfkey1:`` and 43 URL-safe base64
characters; :meth:`ClusterKey.generate` makes a random one and ``dtf-cluster keygen PATH`` writes one to a
file only its owner can read.

Any other text is a *passphrase*: it is stretched with scrypt (memory-hard: 32 MiB and about 0.1 s per guess)
and a salt naming the cluster, so a captured handshake cannot be brute-forced cheaply and one dictionary
attack does not serve against every cluster. A passphrase therefore needs that salt (``cluster_key_salt``,
``DTF_CLUSTER_SALT``, ``dtf-server --cluster-salt``), the same on every task and client.

Example:
    >>> key = ClusterKey.generate()
    >>> ClusterKey.parse(key.text) == key, key.text.startswith("dtfkey1:")
    (True, True)
    >>> ClusterKey.parse("correct horse battery staple", salt="exp42") == ClusterKey.parse(
    ...     "correct horse battery staple", salt="exp42")
    True
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import os
import stat

__all__ = ["KEY_PREFIX", "ClusterKey", "read_key_file", "write_key_file"]

KEY_PREFIX = "dtfkey1:"
_KEY_BYTES = 32
# scrypt's cost: N=2**15, r=8 takes 32 MiB and ~0.1 s per derivation on one core (OWASP's interactive minimum
# is N=2**17 with r=8 for stored passwords; a cluster key is derived once per process, so this is affordable).
_SCRYPT = {"n": 1 << 15, "r": 8, "p": 1, "maxmem": 64 << 20, "dklen": _KEY_BYTES}
_SALT_DOMAIN = b"dtf_notebook cluster key salt v1\0"


class ClusterKey:
    """A cluster's 32 secret bytes (compared and hashed by value; never shown in ``repr``).

    Example:
        >>> key = ClusterKey(bytes(32))
        >>> key.text
        'dtfkey1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'
        >>> repr(key).startswith("<ClusterKey ")  and key.text not in repr(key)
        True
    """

    __slots__ = ("_material",)

    def __init__(self, material: bytes) -> None:
        if not isinstance(material, bytes) or len(material) != _KEY_BYTES:
            raise ValueError(f"A cluster key is {_KEY_BYTES} bytes")
        self._material = material

    @classmethod
    def generate(cls) -> ClusterKey:
        """A new random key (``os.urandom``).

        Example:
            >>> ClusterKey.generate() == ClusterKey.generate()
            False
        """
        return cls(os.urandom(_KEY_BYTES))

    @classmethod
    def parse(cls, text: str, salt: str | None = None) -> ClusterKey:
        """The key a text stands for: a ``dtfkey1:`` key as it is, anything else as a passphrase with ``salt``.

        Raises:
            ValueError: the text is empty, a ``dtfkey1:`` key is malformed, or a passphrase comes without a salt.

        Example:
            >>> ClusterKey.parse("s3cret")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
                ...
            ValueError: The cluster key is a passphrase, which needs a salt naming the cluster (...); or use a ...
        """
        if not isinstance(text, str) or not text.strip():
            raise ValueError("A cluster key cannot be empty")
        text = text.strip()
        if text.startswith(KEY_PREFIX):
            body = text[len(KEY_PREFIX) :]
            try:
                material = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
            except ValueError:
                material = b""
            if len(material) != _KEY_BYTES or not body.isascii():
                raise ValueError(
                    f"Malformed cluster key: after {KEY_PREFIX!r} come {_KEY_BYTES} bytes in URL-safe base64 "
                    "(43 characters); the key was cut or changed"
                )
            return cls(material)
        if not salt:
            raise ValueError(
                "The cluster key is a passphrase, which needs a salt naming the cluster (the same on every task "
                "and client: ConfigProto(cluster_key_salt=...), DTF_CLUSTER_SALT or dtf-server --cluster-salt); "
                "or use a random key from `dtf-cluster keygen PATH`"
            )
        return cls(_stretch(text, salt))

    @property
    def text(self) -> str:
        """The key written down: ``dtfkey1:`` and URL-safe base64 (a passphrase's key too, already stretched)."""
        return KEY_PREFIX + base64.urlsafe_b64encode(self._material).rstrip(b"=").decode("ascii")

    @property
    def fingerprint(self) -> str:
        """16 hex digits that tell keys apart and reveal nothing of them (fine to log or show).

        Example:
            >>> len(ClusterKey(bytes(32)).fingerprint)
            16
        """
        return self.derive("fingerprint").hex()[:16]

    def derive(self, purpose: str) -> bytes:
        """32 bytes for one purpose (HMAC-SHA256 of the key): independent of every other purpose's.

        Example:
            >>> key = ClusterKey(bytes(32))
            >>> key.derive("a") != key.derive("b"), len(key.derive("a"))
            (True, 32)
        """
        return hmac.new(self._material, f"dtf_notebook/{purpose}".encode(), hashlib.sha256).digest()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ClusterKey) and hmac.compare_digest(self._material, other._material)

    def __hash__(self) -> int:
        return hash(self.derive("hash"))

    def __repr__(self) -> str:
        return f"<ClusterKey {self.fingerprint}>"


@functools.lru_cache(maxsize=16)
def _stretch(passphrase: str, salt: str) -> bytes:
    """scrypt of a passphrase with the cluster's salt (cached: a process derives it once, not per socket)."""
    salted = hashlib.sha256(_SALT_DOMAIN + salt.encode("utf-8")).digest()
    return hashlib.scrypt(passphrase.encode("utf-8"), salt=salted, **_SCRYPT)


def read_key_file(path: str) -> str:
    """The key text in a key file, refused when other users could read the file (as ssh refuses a private key).

    Raises:
        PermissionError: the file is readable or writable by its group or others (the message says how to fix it).
        ValueError: the file is empty.
        OSError: the file cannot be read.

    Example:
        >>> import tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "cluster.key")
        >>> key = write_key_file(path)
        >>> ClusterKey.parse(read_key_file(path)) == key
        True
        >>> os.chmod(path, 0o644); read_key_file(path)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
            ...
        PermissionError: Key file ... can be read by other users (mode 0644): run `chmod 600 ...
    """
    with open(path, encoding="utf-8") as f:
        mode = stat.S_IMODE(os.fstat(f.fileno()).st_mode)
        if mode & 0o077:
            raise PermissionError(
                f"Key file {path} can be read by other users (mode {mode:04o}): run `chmod 600 {path}` "
                "(or make a new key with `dtf-cluster keygen PATH`)"
            )
        text = f.read().strip()
    if not text:
        raise ValueError(f"Key file {path} is empty")
    return text


def write_key_file(path: str, key: ClusterKey | None = None) -> ClusterKey:
    """Writes ``key`` (a new random one by default) to a new file only its owner can read; returns the key.

    Raises:
        FileExistsError: ``path`` exists (a key file is never overwritten).

    Example:
        >>> import tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "cluster.key")
        >>> key = write_key_file(path)
        >>> oct(os.stat(path).st_mode & 0o777)
        '0o600'
    """
    key = key if key is not None else ClusterKey.generate()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(key.text + "\n")
    return key
