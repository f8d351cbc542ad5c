"""The source repository every page links to (MkDocs' repo_url, which Material shows in the header) and the
home and contributing pages name: a build setting (`make site REPO_URL=...`, read as CONNLAB_REPO_URL), or
else the clone's `origin` remote; none where neither is there. Shared by render/ (the pages that name it) and
publish/ (MkDocs' configuration), and importing neither.

make always exports the variable, set to the setting or to the origin's address it read (so that the value
that makes the stages due is the one used), and an empty one means no link. Run without make, the variable
is unset and the origin is read here.
"""

from __future__ import annotations

import configparser
import os
import re
from pathlib import Path

from connlab.paths import REPO_ROOT

REPO_URL_VARIABLE = "CONNLAB_REPO_URL"

# git's scp-like form, user@host:owner/repo(.git), and ssh://[user@]host[:port]/owner/repo(.git): a reader's
# browser opens neither, so each is given as the https address of the same path.
_SCP_FORM = re.compile(r"^(?:[^@/:]+@)?(?P<host>[^/:]+):(?!//)(?P<path>.+)$")
_SSH_FORM = re.compile(r"^(?:git\+)?ssh://(?:[^@/]+@)?(?P<host>[^/:]+)(?::\d+)?/(?P<path>.+)$")
_GIT_FORM = re.compile(r"^git://(?P<host>[^/:]+)(?::\d+)?/(?P<path>.+)$")


def browsable(remote: str) -> str | None:
    """A git remote's address as a reader's browser opens it: https for the ssh and scp-like forms, without
    a trailing `.git`, user or password; None for one that is no web address (a local path)."""
    remote = remote.strip()
    for form in (_SSH_FORM, _GIT_FORM):
        found = form.match(remote)
        if found:
            return _https(found.group("host"), found.group("path"))
    if remote.startswith(("https://", "http://")):
        scheme, _, rest = remote.partition("://")
        host, _, path = rest.partition("/")
        return _https(host.rpartition("@")[2], path, scheme)
    found = _SCP_FORM.match(remote)
    if found and "/" not in found.group("host") and not remote.startswith(("/", ".", "file:")):
        return _https(found.group("host"), found.group("path"))
    return None


def _https(host: str, path: str, scheme: str = "https") -> str | None:
    path = path.strip("/").removesuffix(".git").rstrip("/")
    return f"{scheme}://{host}/{path}" if host and path else None


def origin_remote(root: Path = REPO_ROOT) -> str:
    """The url of the clone's `origin` remote, as git config gives it, read from the clone's config file (a
    render or a publish starts no process for it); empty where there is none, or no clone."""
    config = _git_config(root)
    if config is None:
        return ""
    parser = configparser.RawConfigParser(strict=False, allow_no_value=True, comment_prefixes=("#", ";"))
    try:
        parser.read(config, encoding="utf-8")
        return (parser.get('remote "origin"', "url", fallback="") or "").strip()
    except configparser.Error:
        return ""


def _git_config(root: Path) -> Path | None:
    """The clone's config file: in its .git folder, or, for a worktree (.git a file naming its folder), in
    the folder its worktrees share."""
    dot_git = root / ".git"
    git_dir = dot_git
    if dot_git.is_file():
        pointer = dot_git.read_text(encoding="utf-8").strip()
        if not pointer.startswith("gitdir:"):
            return None
        git_dir = (root / pointer.removeprefix("gitdir:").strip()).resolve()
        common = git_dir / "commondir"
        if common.is_file():
            git_dir = (git_dir / common.read_text(encoding="utf-8").strip()).resolve()
    config = git_dir / "config"
    return config if config.is_file() else None


def repository_url() -> str | None:
    """The repository's address for a reader: the setting's (make's) value, the origin where it is unset."""
    setting = os.environ.get(REPO_URL_VARIABLE)
    remote = origin_remote() if setting is None else setting
    return browsable(remote) if remote else None


def repository_name(url: str) -> str:
    """What the header shows beside its icon: the repository's owner/name (its path's last two parts)."""
    return "/".join(url.rstrip("/").split("/")[3:][-2:])
