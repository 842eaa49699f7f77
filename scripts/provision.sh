#!/usr/bin/env bash
# Installs the servers the tests start (redis-server, valkey-server) when they are missing.
# `npm test` runs it first (pretest) and `.ci/run` too, so a fresh machine needs no other step:
# as root it uses Debian's packages; otherwise it prints the exact command and fails.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v valkey-server >/dev/null 2>&1 || missing+=(valkey-server)
[ ${#missing[@]} -eq 0 ] && exit 0

# valkey-server is in Debian's main suite from trixie on; bookworm has it (8.0) only in backports.
suite=$( (. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}") || true)
valkey_suite=()
[ "$suite" = bookworm ] && valkey_suite=(-t bookworm-backports)

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "The tests need ${missing[*]} on the PATH. On Debian or Ubuntu, as root:" >&2
  [ "$suite" = bookworm ] &&
    echo "  echo 'deb http://deb.debian.org/debian bookworm-backports main' >/etc/apt/sources.list.d/bookworm-backports.list" >&2
  echo "  apt-get update && apt-get install -y redis-server && apt-get install -y ${valkey_suite[*]} valkey-server" >&2
  echo "Elsewhere, install Redis 7+ and Valkey 8+ from your package manager." >&2
  exit 1
fi

if [ "$suite" = bookworm ] &&
  ! grep -rqsE '^[^#]*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d; then
  echo 'deb http://deb.debian.org/debian bookworm-backports main' >/etc/apt/sources.list.d/bookworm-backports.list
fi
apt-get update -qq
for name in "${missing[@]}"; do
  if [ "$name" = valkey-server ]; then
    apt-get install -y -qq "${valkey_suite[@]}" valkey-server >/dev/null
  else
    apt-get install -y -qq redis-server >/dev/null
  fi
  # The package starts a service on its default port; the tests start their own servers.
  (service "$name" stop || true) >/dev/null 2>&1
done
redis-server --version
valkey-server --version
