#!/usr/bin/env bash
# Prints the package version for the current git checkout, valid for both
# dpkg and rpm and ordered the way releases are:
#   tag v1.2.0                    -> 1.2.0
#   3 commits after v1.2.0        -> 1.2.0+git3.gabc1234
#   no tag yet                    -> 0.0.0~git20260101.gabc1234  (~ sorts first)
#   uncommitted changes           -> ... with ".dirty" appended
# The binaries carry the raw `git describe` string (Makefile VERSION); this is
# only the package manager's view of it.
set -euo pipefail

desc=$(git describe --tags --match 'v[0-9]*' --long --dirty 2>/dev/null || true)
dirty=""
if [[ $desc == *-dirty ]]; then
	dirty=".dirty"
	desc=${desc%-dirty}
fi
if [[ $desc =~ ^v([0-9]+\.[0-9]+\.[0-9]+)-([0-9]+)-g([0-9a-f]+)$ ]]; then
	base=${BASH_REMATCH[1]} n=${BASH_REMATCH[2]} hash=${BASH_REMATCH[3]}
	if [[ $n == 0 ]]; then
		echo "${base}${dirty:++dirty}"
	else
		echo "${base}+git${n}.g${hash}${dirty}"
	fi
	exit 0
fi
hash=$(git rev-parse --short=7 HEAD)
date=$(git log -1 --format=%cd --date=format:%Y%m%d HEAD)
git diff --quiet HEAD -- 2>/dev/null || dirty=".dirty"
echo "0.0.0~git${date}.g${hash}${dirty}"
