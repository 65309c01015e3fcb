#!/usr/bin/env bash
# Default deploy step of the local stack: it deploys nothing, it shows what a deploy would do.
# A platform team replaces it with DEPLOY_COMMAND (see ../README.md).
set -euo pipefail

image="local/${SERVICE_ID}:${COMMIT_HASH:0:12}"
echo "Deploying ${image} (deployment ${DEPLOYMENT_ID})"
for stage in "pushing ${image}" "starting the new version" "checking its health" "switching traffic"; do
  echo "- ${stage}"
  sleep 1
done
echo "Deployed ${image}"
