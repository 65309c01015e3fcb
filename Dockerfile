# syntax=docker/dockerfile:1
#
# The one Dockerfile of every Node process in this repository (the five services and dev-idp).
# Build from the repository root; the workspace to build is a build argument:
#
#   docker build --build-arg WORKSPACE=services/projects --build-arg PORT=4002 .
#
# docker-compose.yml passes each service's arguments (`build.args`), and `docker compose build
# <service>` builds the image `platform-<service>` with them. Arguments:
#
#   WORKSPACE      required: the npm workspace to build and run, a directory with package.json and
#                  tsconfig.json (services/auth, tools/dev-idp, ...)
#   PORT           the port the process listens on (EXPOSE, documentation only; the process reads
#                  PORT or GATEWAY_PORT from its environment)
#   RUNTIME_FILES  files or directories of the workspace, besides dist/, that it reads at run time,
#                  separated by spaces (gateway: openapi.json)
#   BUILD_ALSO     more workspaces, separated by spaces, built with their `npm run build` after
#                  WORKSPACE, whose dist/ the image carries beside it (gateway: apps/dashboard, the
#                  web dashboard it serves at /; services/gateway/src/dashboard)
#   INIT           `tini` runs the process under tini as PID 1, which reaps the orphans of the
#                  processes the deployments service starts (git, the sandbox, the local runtime's
#                  supervisor); default `none`
#   PACKAGES       Debian packages the process runs besides node, separated by spaces, installed
#                  with apt-get (deployments: git, which fetches the services' commits; bubblewrap,
#                  the sandbox of builds and apps; ca-certificates for https repositories)
#   DATA_DIRS      absolute directories the process writes to, separated by spaces, made in the
#                  image and owned by `node`, so that a named volume mounted there starts out
#                  writable by it (deployments: its BUILDS_DIR and RUNTIME_DIR)
#
# The image runs `node dist/main.js` in /app/<WORKSPACE> as the user `node`, NODE_ENV=production,
# with the workspace's production dependencies only. dev-idp refuses NODE_ENV=production: its
# environment (docker-compose.yml, the development overlay of k8s/) sets development.
#
# Dependencies are installed with `npm install`, which takes the versions in package-lock.json,
# not with `npm ci`: the registry this project is built against serves only linux-x64 builds of
# platform-specific packages, so the committed lock cannot list the other platforms' optional
# ones, and `npm ci` refuses a lock without them (npm 11 does; the npm 10 of node:20 images is
# laxer today, which the build must not depend on). scripts/test.sh and scripts/start.sh install
# the same way. Install scripts are skipped: only development packages have any, and neither the
# TypeScript build nor the services need them.
#
# tools/manifest-check loads this file with BuildKit's own Dockerfile frontend for every service
# in docker-compose.yml (npm test).

ARG NODE_IMAGE=node:20-bookworm-slim
ARG INIT=none

# Every package.json (root and workspaces), the lock and .npmrc, and nothing else, so the install
# layers below are reused until one of them changes.
FROM ${NODE_IMAGE} AS manifests
WORKDIR /src
COPY . .
RUN mkdir /manifests \
  && find . -name package.json -not -path '*/node_modules/*' \
    -exec cp --parents -t /manifests package-lock.json .npmrc {} +

# All workspaces' dependencies, development ones included (the same layer for every image),
# then the TypeScript build of WORKSPACE and the projects it references.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY --from=manifests /manifests/ ./
RUN --mount=type=cache,target=/root/.npm,sharing=locked \
  npm install --no-audit --no-fund --ignore-scripts
COPY . .
ARG WORKSPACE
RUN test -n "$WORKSPACE" && test -f "$WORKSPACE/package.json" && test -f "$WORKSPACE/tsconfig.json" \
  || { echo "WORKSPACE=$WORKSPACE is not a workspace (a directory with package.json and tsconfig.json)" >&2; exit 1; }
RUN node_modules/.bin/tsc -b "$WORKSPACE"
ARG BUILD_ALSO=""
RUN for workspace in $BUILD_ALSO; do npm run build --workspace "$workspace" || exit 1; done
# What the runtime copies: the shared library (every service depends on @platform/shared), the
# workspace's build and its RUNTIME_FILES, and the builds of BUILD_ALSO. A missing runtime file
# fails the build.
ARG RUNTIME_FILES=""
RUN mkdir /out \
  && cp -R --parents libs/shared/dist "$WORKSPACE/dist" /out/ \
  && for file in $RUNTIME_FILES; do cp -R --parents "$WORKSPACE/$file" /out/ || exit 1; done \
  && for workspace in $BUILD_ALSO; do cp -R --parents "$workspace/dist" /out/ || exit 1; done

FROM ${NODE_IMAGE} AS init-none

FROM ${NODE_IMAGE} AS init-tini
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
ENTRYPOINT ["/usr/bin/tini", "--"]

FROM init-${INIT} AS runtime
ARG PACKAGES=""
RUN if [ -n "$PACKAGES" ]; then \
    apt-get update \
    && apt-get install -y --no-install-recommends $PACKAGES \
    && rm -rf /var/lib/apt/lists/*; \
  fi
ARG DATA_DIRS=""
RUN for dir in $DATA_DIRS; do install -d -o node -g node "$dir" || exit 1; done
ENV NODE_ENV=production
WORKDIR /app
COPY --from=manifests /manifests/ ./
ARG WORKSPACE
RUN --mount=type=cache,target=/root/.npm,sharing=locked \
  npm install --no-audit --no-fund --ignore-scripts --omit=dev --workspace "$WORKSPACE"
COPY --from=build /out/ ./
WORKDIR /app/${WORKSPACE}
USER node
ARG PORT
EXPOSE ${PORT}
CMD ["node", "dist/main.js"]
