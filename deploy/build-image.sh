#!/usr/bin/env bash
# Builds the zarlog container image from deploy/Containerfile with buildah:
# a static binary (CGO_ENABLED=0) on an empty base. No registry is needed.
#   deploy/build-image.sh [TAG]       (default localhost/zarlog:latest)
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${1:-localhost/zarlog:latest}
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
CGO_ENABLED=0 ${GO:-go} build -trimpath -ldflags "-s -w" -o "$ctx/zarlog" ./cmd/zarlog
cp deploy/Containerfile "$ctx/Containerfile"
buildah bud --quiet -f "$ctx/Containerfile" -t "$tag" "$ctx"
echo "built $tag"
