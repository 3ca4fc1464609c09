#!/bin/sh
# The image's build stage (deploy/Dockerfile), also run by CI outside a
# container (scripts/check-image.sh), so that a broken image fails CI.
# In the build context's /app: npm ci runs the package's install script (the
# addon, built from the pinned whisper.cpp source) and prepare (the
# TypeScript and the settings page); then the dev dependencies go.
set -eu
npm ci
npm prune --omit=dev
