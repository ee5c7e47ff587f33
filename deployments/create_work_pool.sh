#!/bin/sh
# Create (or update) the process work pool every policy-kb deployment runs on, and its kb-notes queue. Idempotent.
#   PREFECT_API_URL=http://127.0.0.1:4200/api deployments/create_work_pool.sh
# kb notes and files (ingest-kb-document) go to the kb-notes queue, one run at a time and after the default
# queue (priority 2): with the worker's --limit of 2, a burst of notes never holds every slot while a policy
# upload waits (docs/performance.md: Soak). Everything else runs from the default queue.
set -eu
pool="${POLICY_KB_WORK_POOL:-policy-kb}"
notes_limit="${KB_NOTES_QUEUE_LIMIT:-1}"
prefect work-pool create "$pool" --type process --overwrite
if ! prefect work-queue create kb-notes --pool "$pool" --limit "$notes_limit" --priority 2 >/dev/null 2>&1; then
	prefect work-queue set-concurrency-limit kb-notes "$notes_limit" --pool "$pool"
fi
