# shellcheck shell=bash
# Sourced by the scripts that build from source with Maven and cache the build by a hash of what
# it is made of (marquez.sh, datahub.sh).

# show_maven_errors LOG: the Maven log's [ERROR] lines (or its tail) on stderr.
show_maven_errors() {
  local errors
  errors=$(sed 's/\x1b\[[0-9;]*m//g' "$1" | grep '^\[ERROR\] *[^ ]' | head -n 25 || true)
  if [[ -n $errors ]]; then echo "$errors" >&2; else tail -n 30 "$1" >&2; fi
}

# tree_digests DIR [FIND-EXPRESSION...]: the sha256 of every file under DIR (those FIND-EXPRESSION
# selects; default: all), in a stable order: what a build key hashes.
tree_digests() {
  local dir=$1
  shift
  (($#)) || set -- -type f -print0
  (cd "$dir" && find . "$@" | LC_ALL=C sort -z | xargs -0 sha256sum)
}
