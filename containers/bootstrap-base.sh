#!/usr/bin/env bash
# Build a Debian bookworm base image without reaching any container registry.
#
# Usage: containers/bootstrap-base.sh TAG        (e.g. chemrobust/base:bookworm)
#
# What it does (needs root, debootstrap and a running Docker engine; about 70 s):
#   1. debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm ROOTFS MIRROR
#   2. tar -C ROOTFS -c . | docker import - TAG   (with ENV PATH / LANG set, CMD python3)
#   3. removes ROOTFS, also on failure.
#
# MIRROR is $CHEMROBUST_DEBIAN_MIRROR when set, else the first Debian mirror URI found in the host's apt
# configuration (deb822 `URIs:` in /etc/apt/sources.list.d/*.sources, then `deb` lines in /etc/apt/sources.list
# and /etc/apt/sources.list.d/*.list), preferring an entry that serves the `bookworm` suite itself.  No mirror
# host name is written here on purpose: the host's apt configuration already knows a reachable one.
#
# The resulting image has Debian's Python 3.11 at /usr/bin/python3 (cp311 wheels fit) and python3-venv.
set -euo pipefail

SUITE=bookworm

if [[ $# -ne 1 || -z "${1}" ]]; then
    echo "usage: $0 TAG   (e.g. $0 chemrobust/base:${SUITE})" >&2
    exit 2
fi
TAG="$1"

for tool in debootstrap docker tar; do
    if ! command -v "${tool}" >/dev/null 2>&1; then
        echo "$0: '${tool}' not found; install it (apt-get install -y debootstrap docker.io) and retry" >&2
        exit 1
    fi
done
if [[ "$(id -u)" -ne 0 ]]; then
    echo "$0: debootstrap needs root (run with sudo)" >&2
    exit 1
fi

# Print the first Debian mirror URI from the host's apt configuration: first one whose suites include
# ${SUITE} exactly, else the first URI at all.  Reads deb822 *.sources and one-line *.list formats.
find_mirror() {
    local files=() f
    for f in /etc/apt/sources.list.d/*.sources; do [[ -f "$f" ]] && files+=("$f"); done
    [[ -f /etc/apt/sources.list ]] && files+=(/etc/apt/sources.list)
    for f in /etc/apt/sources.list.d/*.list; do [[ -f "$f" ]] && files+=("$f"); done
    [[ ${#files[@]} -gt 0 ]] || return 0
    awk -v suite="${SUITE}" '
        function flush() {
            if (uri != "" && types ~ /(^|[ \t])deb([ \t]|$)/) {
                if (first == "") first = uri
                if (best == "" && (" " suites " ") ~ (" " suite " ")) best = uri
            }
            uri = ""; suites = ""; types = ""
        }
        FNR == 1 { flush() }
        /^[ \t]*#/ { next }
        # deb822 stanzas (blank line separates)
        /^[ \t]*$/ { flush(); next }
        /^Types:/  { sub(/^Types:[ \t]*/, ""); types = $0; next }
        /^URIs:/   { sub(/^URIs:[ \t]*/, ""); split($0, u, /[ \t]+/); uri = u[1]; next }
        /^Suites:/ { sub(/^Suites:[ \t]*/, ""); suites = $0; next }
        # one-line format: deb [opts] URI SUITE COMPONENTS...
        /^[ \t]*deb[ \t]/ {
            flush()
            i = 2
            if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
            uri = $i; suites = $(i + 1); types = "deb"
            flush()
            next
        }
        END {
            flush()
            if (best != "") print best; else if (first != "") print first
        }
    ' "${files[@]}"
}

MIRROR="${CHEMROBUST_DEBIAN_MIRROR:-}"
if [[ -z "${MIRROR}" ]]; then
    MIRROR="$(find_mirror)"
fi
if [[ -z "${MIRROR}" ]]; then
    echo "$0: no Debian mirror found in /etc/apt/sources.list{,.d/*}; set CHEMROBUST_DEBIAN_MIRROR" >&2
    exit 1
fi
echo "bootstrap-base: ${SUITE} from ${MIRROR} -> ${TAG}" >&2

ROOTFS="$(mktemp -d "${TMPDIR:-/tmp}/chemrobust-rootfs.XXXXXX")"
cleanup() { rm -rf --one-file-system "${ROOTFS}"; }
trap cleanup EXIT

start=${SECONDS}
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
    "${SUITE}" "${ROOTFS}" "${MIRROR}" >&2

# Keep the image small and deterministic-ish: no apt lists, no caches, no docs we never read.
rm -rf "${ROOTFS}/var/lib/apt/lists/"* "${ROOTFS}/var/cache/apt/"*.bin "${ROOTFS}/var/cache/apt/archives/"*.deb \
    "${ROOTFS}/usr/share/doc/"* "${ROOTFS}/usr/share/man/"* "${ROOTFS}/usr/share/info/"*

# `docker import` gives an image with an empty config: set PATH (a Dockerfile's ENV PATH=...:$PATH would
# otherwise expand to an empty tail), a UTF-8 locale and a harmless default command.
tar --numeric-owner -C "${ROOTFS}" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["python3"]' \
    --message "chemrobust bootstrap-base: debootstrap minbase ${SUITE} + python3, python3-venv, ca-certificates" \
    - "${TAG}" >&2

echo "bootstrap-base: built ${TAG} in $((SECONDS - start)) s" >&2
docker image inspect --format '{{.Id}}' "${TAG}"
