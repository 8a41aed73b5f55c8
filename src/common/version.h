/* version.h -- the release, as `tincan version` and `tincan info` print it and
 * debian/changelog names it (tests/integration/pkg_docs.sh and .ci/package compare). */
#ifndef TINCAN_VERSION_H
#define TINCAN_VERSION_H

#define TINCAN_VERSION "0.1"

#endif
