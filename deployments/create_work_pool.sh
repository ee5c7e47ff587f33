#!/bin/sh
# Create (or update) the process work pool every policy-kb deployment runs on. Idempotent.
#   PREFECT_API_URL=http://127.0.0.1:4200/api deployments/create_work_pool.sh
set -eu
pool="${POLICY_KB_WORK_POOL:-policy-kb}"
prefect work-pool create "$pool" --type process --overwrite
