#!/bin/sh
# build.sh -- builds eval_xcodec from src/common/buf.c, src/x11/xwire.c and src/xcodec/
# alone (so it does not depend on the rest of the tree), into build/xcodec/.
set -eu
cd "$(dirname "$0")/../.."
B=build/xcodec
mkdir -p $B
[ -f build/gen/xproto_tables.h ] || make build/gen/xproto_tables.h
cc -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Wshadow -Wno-unused-parameter -Isrc -Ibuild/gen \
   -o $B/eval_xcodec bench/xcodec/eval_xcodec.c src/xcodec/*.c src/common/buf.c src/common/log.c src/x11/xwire.c -lzstd -lwebp -lm
# chain_link: the link's codec too (build/libtincan.a, from make)
[ -f build/libtincan.a ] || make build/libtincan.a
cc -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Wshadow -Wno-unused-parameter -Isrc -Ibuild/gen \
   -o $B/chain_link bench/xcodec/chain_link.c build/libtincan.a -lzstd -lsodium -lwebp -lm
