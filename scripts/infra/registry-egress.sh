#!/usr/bin/env bash
# Prints what SANDBOX_EGRESS_ALLOW needs on this machine: the IPv4 addresses the public package
# registries resolve to, one /32 each, comma-separated. Sandboxed builds reach public addresses
# only; on a network where the registries answer at an address that counts as not public (here a
# documentation range, 203.0.113.0/24, behind an egress proxy), builds need exactly these to
# install packages. scripts/test.sh and scripts/start.sh export it unless SANDBOX_EGRESS_ALLOW is
# set (also to empty). See services/deployments/README.md, "The sandbox".
set -euo pipefail
hosts=(registry.npmjs.org pypi.org files.pythonhosted.org proxy.golang.org repo.maven.apache.org
  repo1.maven.org index.crates.io static.crates.io github.com codeload.github.com)
getent ahostsv4 "${hosts[@]}" 2>/dev/null | awk '{ print $1 "/32" }' | sort -u | paste -sd, -
