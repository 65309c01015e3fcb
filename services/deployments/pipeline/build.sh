#!/usr/bin/env bash
# Default build step of the local stack: it builds nothing, it shows what a build would do.
# A platform team replaces it with BUILD_COMMAND (see ../README.md).
set -euo pipefail

image="local/${SERVICE_ID}:${COMMIT_HASH:0:12}"
echo "Building deployment ${DEPLOYMENT_ID}: service ${SERVICE_ID} of project ${PROJECT_ID}"
echo "Commit ${COMMIT_HASH}: ${COMMIT_MESSAGE:-(no message)}"
for stage in "fetching the sources" "installing dependencies" "compiling" "packaging ${image}"; do
  echo "- ${stage}"
  sleep 1
done
echo "Built ${image}"
