r"""Failure reasons for the public: a category and a short reason without host details.

A failed run's reason is recorded in full in MLflow (with the tail of its log) for the maintainers. What
the public sees (the site's pages and data, the pull-request summary) is :func:`failure_category` (image
build failed, timeout, memory limit, ...) and :func:`public_reason`: the first line, printable, scrubbed of
what describes the host rather than the submission, and clipped:

- absolute paths (``/work/…``, ``/tmp/…``, ``/var/lib/docker/…``, ``/proc/…``, ``~/…``, ``C:\…``) become
  ``<path>``, except the sandbox's own mount points (``/out``, ``/data``, ``/models``, ``/job``,
  ``/submission``, and a file directly in one of them other than ``/data``), which mean the same in every
  container and explain the failure;
- Docker storage tokens (``overlay2/…``, ``containerd/…``, ``lib/docker/…``) become ``<path>`` too;
- a kernel command line (``BOOT_IMAGE=``, ``root=``, ``console=`` …) or ``Linux version …`` cuts the rest
  of the reason: ``<kernel command line>``;
- container ids, digests and other long hexadecimal strings (12 or more digits, with letters and digits),
  UUIDs, and base64-like blobs of 40 or more characters become ``<id>`` / ``<blob>``;
- IPv4 and IPv6 addresses and MAC addresses become ``<ip>`` / ``<mac>``; a URL keeps its scheme, host and
  path, loses credentials and query, and its host when that is an address.

The scrub is a second line of defence for what a crash message happens to quote: the sandbox is what
keeps host details out of a container, and a submission that means to leak something can encode it past
any filter. The category is read from the reason's text; a crash's reason is the submission's own last
line on stderr, so a submission can mislabel its own failure, never another's.

Side effects: none.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from leaderboard.text import clip, printable

__all__ = [
    "CATEGORIES",
    "NO_REASON",
    "PUBLIC_REASON_MAX",
    "failure_category",
    "public_reason",
    "scrub",
]

#: The most characters :func:`public_reason` returns.
PUBLIC_REASON_MAX = 300
#: What :func:`public_reason` says for an empty or missing reason.
NO_REASON = "no reason recorded"

#: Failure categories with the rule that recognises each, tried in order; the fallback is ``crashed``.
#: Anchored (``^``) rules match the reasons the host writes itself; the rest read a crash's last line.
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (category, re.compile(pattern, re.IGNORECASE))
    for category, pattern in (
        ("image build failed", r"^(?:image build failed|cannot pull )"),
        ("interrupted", r"^interrupted\b"),
        ("invalid output", r"^(?:invalid output|output limit exceeded)\b"),
        ("engine error", r"^docker error\b"),
        ("timeout", r"^wall-clock timeout\b"),
        ("memory limit", r"^(?:out of memory\b|killed \(exit 137\))"),
        (
            "data or weights unavailable",
            r"^(?:cannot (?:download|fetch)\b|download of |data set )|sha256 does not match|"
            r"no safetensors weights|files fetched are not revision|outside the hub cache|"
            r"is not a folder inside \S+==",
        ),
        ("timeout", r"\b(?:timeout|timed out)\b"),
        ("memory limit", r"out of memory|\bMemoryError\b|\bOOM\b"),
    )
)
#: Every category :func:`failure_category` returns.
CATEGORIES: tuple[str, ...] = (*dict.fromkeys(c for c, _ in _RULES), "crashed", "unknown")

# Container paths that name the sandbox's mounts (leaderboard/execution/sandbox.py), not the host.
_SANDBOX_PATH = re.compile(r"/(?:data|(?:out|models|job|submission)(?:/[\w.-]+)?)")
_KERNEL_PARAMS = (
    "BOOT_IMAGE|root|rootfstype|rootflags|rootwait|initrd|init|console|crashkernel|resume|cgroup_\\w+|"
    "systemd\\.\\w+|apparmor|selinux|security|intel_iommu|amd_iommu|iommu|mitigations|earlyprintk|audit|"
    "nvme_core\\.\\w+|net\\.ifnames|biosdevname"
)
_PATH_CHARS = r"[^\s'\"`<>|,;()\[\]{}\\]"
_PLACEHOLDER = r"<(?:path|id|ip|mac|blob|kernel command line)>"
# An id or address goes with the relative path after it ("3f2a9c1b7d4e/merged", "10.0.0.0/8"), so that
# no placeholder is ever followed by "/": a second scrub would read that as an absolute path.
_TAIL = rf"(?P<tail>/{_PATH_CHARS}*)?"
_SCRUB = re.compile(
    "|".join(
        (
            rf"(?P<keep>{_PLACEHOLDER}|</[A-Za-z][\w-]*>)",  # placeholders (idempotence), closing tags
            rf"(?P<kernel>(?<![\w.-])(?:(?:{_KERNEL_PARAMS})=|Linux version \d).*)",
            rf"(?P<url>\b[A-Za-z][A-Za-z0-9+.-]*://(?:[^\s'\"<>`]|{_PLACEHOLDER})+)",
            r"(?P<win>\b[A-Za-z]:\\[^\s'\"<>|]*)",
            rf"(?P<path>(?<![\w/.~-])(?:~[\w.-]*)?/{_PATH_CHARS}+)",
            r"(?P<docker>(?<!\S)(?=\S*/)\S*(?:overlay|containerd|lib/docker)\S*)",
            # ids and addresses, each with the relative path that may follow it (_TAIL)
            r"(?:(?P<uuid>\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b)"
            r"|(?P<mac>(?<![\w:])[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5}(?![\w:]))"
            r"|(?P<ip6>(?<![\w:.])(?=[0-9a-fA-F.]*:[0-9a-fA-F.]*:)[0-9a-fA-F:.]{2,45}(?![\w:]))"
            r"|(?P<ip4>(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?!\.?\w))"
            r"|(?P<hex>(?<![0-9A-Za-z])(?:sha256:)?(?=[0-9a-fA-F]*[a-fA-F])(?=[0-9a-fA-F]*\d)"
            r"[0-9a-fA-F]{12,}(?![0-9A-Za-z])))" + _TAIL,
            r"(?P<blob>(?<![\w+/=-])[A-Za-z0-9+/_-]{40,}={0,2}(?![\w+/=-]))",
        )
    ),
    re.DOTALL,
)
_HEX = re.compile(
    r"(?<![0-9A-Za-z])(?=[0-9a-fA-F]*[a-fA-F])(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{12,}(?![0-9A-Za-z])"
)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _url(url: str) -> str:
    """Keep a URL's scheme, host and path; drop credentials, query and fragment; hide an address host."""
    scheme, _, rest = url.partition("://")
    if scheme.lower() == "file":
        return "<path>"
    netloc, slash, path = rest.partition("/")
    host = netloc.rpartition("@")[2]
    name = host[1 : host.find("]")] if host.startswith("[") else host.rsplit(":", 1)[0]
    if _is_ip(name) or name.lower() == "localhost":
        host = "<ip>"
    path = re.split(r"[?#]", path, maxsplit=1)[0]
    return f"{scheme}://{host}{slash}{_HEX.sub('<id>', path)}"


def _replace(match: re.Match[str]) -> str:
    kind = next(name for name, value in match.groupdict().items() if value is not None and name != "tail")
    text, tail = match.group(kind), match.group("tail") or ""
    if kind == "keep":
        return text
    if kind == "kernel":
        return "<kernel command line>"
    if kind == "url":
        return _url(text)
    if kind == "path":
        core = text.rstrip(".:!?'")
        if _SANDBOX_PATH.fullmatch(core):
            return text
        return "<path>" + text[len(core) :]
    if kind in ("win", "docker"):
        return "<path>"
    if kind == "blob":  # only a mix of upper case, lower case and digits (not a long identifier or word)
        mixed = all(re.search(p, text) for p in (r"\d", "[a-z]", "[A-Z]"))
        return "<blob>" if mixed else text
    if kind in ("ip6", "ip4"):
        core = text.rstrip(".")
        if _is_ip(core):
            return "<ip>" + ("" if tail else text[len(core) :])  # "10.0.0.0/8", "10.0.0.5/api" -> <ip>
        scrubbed = _HEX.sub("<id>", text)
        return scrubbed + tail if scrubbed == text or not tail else "<path>"
    # uuid, mac, hex: with a path after it, the whole relative path goes
    return "<path>" if tail else ("<mac>" if kind == "mac" else "<id>")


def scrub(text: str) -> str:
    r"""Return ``text`` with host details replaced by placeholders (see the module's docstring).

    Parameters
    ----------
    text : str
        Any text, usually one printable line.

    Returns
    -------
    str
        ``text`` with paths, Docker storage, kernel command lines, ids, addresses and blobs replaced; the
        sandbox's mount points are kept. Idempotent.

    Examples
    --------
    >>> scrub("open /work/main/.state/jobs/x failed; /out/result.json missing")
    'open <path> failed; /out/result.json missing'
    >>> scrub("mount lowerdir=/var/lib/docker/overlay2/l/ABC:/x,upperdir=/y")
    'mount <path>'
    >>> scrub("cmdline: BOOT_IMAGE=/vmlinuz-6.1 root=UUID=1 ro quiet")
    'cmdline: <kernel command line>'
    >>> scrub("container 3f2a9c1b7d4e on 10.0.0.5:2375 and fe80::1, see https://user:pw@hf.co/x?token=1")
    'container <id> on <ip>:2375 and <ip>, see https://hf.co/x'
    >>> scrub("1/2 done and/or 12:34:56, CapEff 0000000000000000")
    '1/2 done and/or 12:34:56, CapEff 0000000000000000'
    """
    return _SCRUB.sub(_replace, text)


def public_reason(reason: Any, *, limit: int = PUBLIC_REASON_MAX) -> str:
    r"""Return the reason the public sees: the first non-empty line, printable, scrubbed and clipped.

    Parameters
    ----------
    reason : Any
        A failure reason as recorded (``None``, NaN or empty when none was).
    limit : int
        The most characters returned (at least 4).

    Returns
    -------
    str
        One printable line of at most ``limit`` characters without host details (:func:`scrub`), or
        :data:`NO_REASON`. Idempotent.

    Examples
    --------
    >>> public_reason("chemrobust: error: OSError: /home/alice/.cache/x\x1b[2J\nTraceback ...")
    'chemrobust: error: OSError: <path>\\x1b[2J'
    >>> public_reason(None)
    'no reason recorded'
    """
    text = "" if reason is None or reason != reason else str(reason)  # NaN != NaN
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    if not line:
        return NO_REASON
    text = printable(line)
    for _ in range(4):  # clipping can end a token where it then reads as an id: scrub to a fixed point
        scrubbed = clip(scrub(text), limit)
        if scrubbed == text:
            break
        text = scrubbed
    return text


def failure_category(reason: Any) -> str:
    """Return the category of a failure, read from its reason (one of :data:`CATEGORIES`).

    Parameters
    ----------
    reason : Any
        A failure reason, as recorded or as :func:`public_reason` returns it.

    Returns
    -------
    str
        ``image build failed``, ``interrupted``, ``invalid output``, ``engine error``, ``timeout``,
        ``memory limit``, ``data or weights unavailable``, ``crashed`` (any other failure of the run) or
        ``unknown`` (no reason recorded).

    Examples
    --------
    >>> failure_category("wall-clock timeout after 600 s")
    'timeout'
    >>> failure_category("killed (exit 137): probably out of memory (limit 8g)")
    'memory limit'
    >>> failure_category("invalid output: row 1: acc_at_1 must be a value in [0, 1], got 7.5")
    'invalid output'
    >>> failure_category("cannot fetch org/m@abc: HTTPError: 404")
    'data or weights unavailable'
    >>> failure_category("chemrobust: error: ValueError: bad shape"), failure_category(None)
    ('crashed', 'unknown')
    """
    line = public_reason(reason)
    if line == NO_REASON:
        return "unknown"
    return next((category for category, rule in _RULES if rule.search(line)), "crashed")
