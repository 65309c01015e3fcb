#!/usr/bin/env bash
# Keeps examples/hello, the sample app of the README's first deploy, in a git repository of its
# own that the local platform can deploy from (SOURCE_ALLOW_LOCAL): a bare repository at
# $EXAMPLES_DIR/hello.git (default ~/.cache/platform-dev/examples), branch main. Whenever the
# directory's files differ from the branch's last commit, a new commit is made. Prints
# `<repository URL> <commit hash>`. scripts/start.sh runs it and shows both.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

: "${EXAMPLES_DIR:=${XDG_CACHE_HOME:-$HOME/.cache}/platform-dev/examples}"
repo="$EXAMPLES_DIR/hello.git"
mkdir -p "$EXAMPLES_DIR"
[ -d "$repo" ] || git init --quiet --bare --initial-branch=main "$repo"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_DIR="$repo" GIT_WORK_TREE="$work" GIT_INDEX_FILE="$work/.index"
cp -R examples/hello/. "$work/"
git add --all
tree=$(git write-tree)
head=$(git rev-parse --quiet --verify refs/heads/main || true)
if [ -z "$head" ] || [ "$(git rev-parse "$head^{tree}")" != "$tree" ]; then
  head=$(GIT_AUTHOR_NAME=platform GIT_AUTHOR_EMAIL=platform@localhost \
    GIT_COMMITTER_NAME=platform GIT_COMMITTER_EMAIL=platform@localhost \
    git commit-tree "$tree" ${head:+-p "$head"} -m "hello: the sample app")
  git update-ref refs/heads/main "$head"
fi
echo "file://$repo $head"
