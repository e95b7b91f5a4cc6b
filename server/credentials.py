"""Secrets of the match server: the operator's admin token, agents' login secrets.

- The admin token comes from ``--admin-token``, else from the environment variable
  ``GGP_ADMIN_TOKEN`` (it need not appear in ``ps``), else ``ggp serve`` makes one and
  writes it to a file only the user can read (:func:`write_private`).
- Agent secrets are never stored: the records keep a salted, slow hash
  (:func:`hash_secret`), checked in constant time (:func:`verify_secret`).
- ``ggp serve --agents FILE`` pre-registers names: one ``NAME SECRET`` per line (lines starting
  with ``#`` and blank lines ignored); a file that others may read is refused
  (:func:`read_agents_file`).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import stat
from pathlib import Path

from server.protocol import NAME_PATTERN, TOKEN_PATTERN
from solvers.errors import GameError

ENV_ADMIN_TOKEN = "GGP_ADMIN_TOKEN"
ADMIN_TOKEN_PATTERN = re.compile(r"[\x21-\x7e]{16,256}")
_ITERATIONS = 50_000  # PBKDF2-SHA256: slow enough for a guessed secret, cheap per login


def admin_token(given: str | None) -> str | None:
    """The operator's token from the flag or the environment (None: make one)."""
    token = given if given is not None else os.environ.get(ENV_ADMIN_TOKEN) or None
    if token is not None and not ADMIN_TOKEN_PATTERN.fullmatch(token):
        raise GameError("the admin token must be 16-256 printable characters without spaces")
    return token


def is_admin_token(given: str, expected: str) -> bool:
    """Whether ``given`` is the operator's token (compared in constant time)."""
    return bool(expected) and hmac.compare_digest(given.encode(), expected.encode())


def new_token() -> str:
    return secrets.token_urlsafe(32)


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, readable and writable by the user only (mode 0600)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise GameError(f"{path}: cannot write: {exc.strerror or exc}") from None
    with os.fdopen(fd, "w") as out:
        os.fchmod(fd, 0o600)  # an older file may have had wider permissions
        out.write(text)


def hash_secret(secret: str, salt: bytes | None = None) -> str:
    """A salted PBKDF2 hash, as stored: ``pbkdf2_sha256$ITERATIONS$SALT$HASH`` (hex)."""
    salt = secrets.token_bytes(16) if salt is None else salt
    digest = hashlib.pbkdf2_hmac("sha256", secret.encode(), salt, _ITERATIONS)
    return f"pbkdf2_sha256${_ITERATIONS}${salt.hex()}${digest.hex()}"


def verify_secret(secret: str, stored: str) -> bool:
    """Whether ``secret`` is the one ``stored`` was made from (constant-time compare)."""
    try:
        scheme, iterations, salt, digest = stored.split("$")
        if scheme != "pbkdf2_sha256":
            return False
        again = hashlib.pbkdf2_hmac("sha256", secret.encode(), bytes.fromhex(salt),
                                    int(iterations))
    except ValueError:
        return False
    return hmac.compare_digest(again.hex(), digest)


def read_agents_file(path: str | Path) -> dict[str, str]:
    """``NAME SECRET`` lines -> {name: secret}; refuses a file that others may read."""
    file = Path(path)
    try:
        mode = file.stat().st_mode
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise GameError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") \
            from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise GameError(f"{path}: holds secrets but others may read it; chmod 600 {path}")
    agents: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if len(words) != 2:
            raise GameError(f"{path}:{number}: expected NAME SECRET")
        name, secret = words
        if not NAME_PATTERN.fullmatch(name):
            raise GameError(f"{path}:{number}: a name is 1-64 of A-Z a-z 0-9 _ . : @ -")
        if not TOKEN_PATTERN.fullmatch(secret):
            raise GameError(f"{path}:{number}: a secret is 8-128 printable characters")
        if name in agents:
            raise GameError(f"{path}:{number}: {name} is listed twice")
        agents[name] = secret
    return agents
