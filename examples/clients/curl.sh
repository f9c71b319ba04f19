#!/bin/sh
# One chat completion through svc with curl. SVC_API_KEY is a key made on the workspace page (svc_…).
set -eu
BASE_URL="${SVC_BASE_URL:-http://localhost:8080/v1}"
curl -sS "$BASE_URL/chat/completions" \
  -H "Authorization: Bearer ${SVC_API_KEY:?set SVC_API_KEY to an svc_ key}" \
  -H 'Content-Type: application/json' \
  -d '{"model":"auto","messages":[{"role":"user","content":"Say hello in one word."}]}'
echo
# The request id to look up under Requests: add -D - to see the x-svc-request-id header.
