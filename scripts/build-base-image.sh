#!/usr/bin/env bash
# Build a local stand-in for the `python:3.11-slim` base image (test infrastructure).
#
# Adapter images start `FROM python:3.11-slim`. Where no registry can be reached that image
# cannot be pulled, so this script makes one with the same name from Debian's packages:
# debootstrap a minimal Debian 12 (Python 3.11), add python3, python3-venv and python3-pip,
# make a virtualenv at /opt/venv whose `python` and `pip` come first on PATH (so `pip install`
# in a Dockerfile behaves as in the official image), and `docker import` the folder.
#
# Cached: the image carries the sha256 of this script as a label; when an image of that name
# already holds the same hash, nothing is built. An image of that name without the label is
# the official one (pulled elsewhere) and is left alone unless --force is given.
# Runs only when a test or a person asks (tests/backend/test_docker.py calls it).
#
#   scripts/build-base-image.sh [--force]      # needs root, a Docker engine, Debian's mirror
#
# Exit codes: 0 built or cached, 1 a step failed, 3 a prerequisite is missing (no root, no
# engine, no debootstrap and no apt): tests skip on 3.
set -euo pipefail

IMAGE="${DRIFT_BASE_IMAGE:-python:3.11-slim}"
LABEL="org.drift-conformance.base-recipe"
SUITE="bookworm"   # Debian 12 ships Python 3.11
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
VENV="/opt/venv"
SELF="$(readlink -f "$0")"
RECIPE="$(sha256sum "$SELF" | cut -c1-64)"   # the recipe is this script
FORCE=0
[ "${1:-}" = "--force" ] && FORCE=1

say() { echo "build-base-image: $*" >&2; }
missing() { say "$*"; exit 3; }
started=$(date +%s)

command -v docker >/dev/null || missing "no docker client on PATH"
docker version --format '{{.Server.Version}}' >/dev/null 2>&1 || missing "no Docker engine answers (docker version failed)"

if docker image inspect "$IMAGE" >/dev/null 2>&1; then
    have="$(docker image inspect -f "{{with .Config.Labels}}{{index . \"$LABEL\"}}{{end}}" "$IMAGE")"
    if [ "$have" = "$RECIPE" ] && [ "$FORCE" = 0 ]; then
        say "$IMAGE is cached (recipe ${RECIPE:0:12}); nothing to do"
        exit 0
    fi
    if [ -z "$have" ] && [ "$FORCE" = 0 ]; then
        say "$IMAGE exists and is not a stand-in built here (no $LABEL label): using it as it is"
        exit 0
    fi
fi

[ "$(id -u)" = 0 ] || missing "debootstrap and chroot need root"
if ! command -v debootstrap >/dev/null; then
    command -v apt-get >/dev/null || missing "debootstrap is not installed and there is no apt-get to install it"
    say "installing debootstrap with apt-get"
    apt-get update -qq >/dev/null || missing "apt-get update failed: Debian's packages cannot be reached"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null \
        || missing "apt-get install debootstrap failed"
fi

ROOTFS="$(mktemp -d /var/tmp/drift-base-rootfs.XXXXXX)"
cleanup() {
    # debootstrap mounts proc/sys inside the target and may leave them mounted when it fails:
    # unmount first, and never let rm cross into another filesystem.
    awk -v r="$ROOTFS" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do
        umount -l "$m" 2>/dev/null || true
    done
    rm -rf --one-file-system "$ROOTFS"
}
trap cleanup EXIT

say "debootstrap $SUITE (minbase + python3, python3-venv, python3-pip) into $ROOTFS"
debootstrap --variant=minbase --include=python3,python3-venv,python3-pip,ca-certificates \
    "$SUITE" "$ROOTFS" "$MIRROR" >"$ROOTFS.log" 2>&1 || {
    tail -n 30 "$ROOTFS.log" >&2; rm -f "$ROOTFS.log"; say "debootstrap failed"; exit 1; }
rm -f "$ROOTFS.log"

say "virtualenv $VENV (python and pip first on PATH)"
chroot "$ROOTFS" /usr/bin/python3 -m venv "$VENV"
chroot "$ROOTFS" "$VENV/bin/python" -c "import sys, ensurepip; assert sys.version_info[:2] == (3, 11), sys.version"

# What the slim image leaves out too: package lists, caches, docs.
chroot "$ROOTFS" apt-get clean
rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* \
    "$ROOTFS"/usr/share/info/* "$ROOTFS"/var/log/*.log "$ROOTFS"/var/cache/debconf/*-old
find "$ROOTFS" -name __pycache__ -prune -exec rm -rf {} +
awk -v r="$ROOTFS" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do umount -l "$m"; done

say "docker import as $IMAGE"
tar --numeric-owner -C "$ROOTFS" -c . | docker import \
    --change "ENV PATH=$VENV/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    --change "ENV LANG=C.UTF-8" \
    --change "LABEL $LABEL=$RECIPE" \
    --change 'LABEL org.drift-conformance.note="local stand-in for python:3.11-slim (scripts/build-base-image.sh)"' \
    --change 'CMD ["python"]' \
    - "$IMAGE" >/dev/null

docker run --rm "$IMAGE" sh -c 'test "$(command -v python)" = /opt/venv/bin/python && test "$(command -v pip)" = /opt/venv/bin/pip && python -V' >&2
say "built $IMAGE (recipe ${RECIPE:0:12}) in $(( $(date +%s) - started )) s"
