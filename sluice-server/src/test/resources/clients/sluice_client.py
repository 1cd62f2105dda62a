"""A Sluice HTTP client in another language (standard library only): produce, pull-consume, enqueue and work a job.

Usage: python3 sluice_client.py BASE_URL [TOKEN]
Prints one JSON line with what it did; exits non-zero on any unexpected answer.
"""
import json
import sys
import urllib.error
import urllib.request

BASE = sys.argv[1].rstrip("/")
TOKEN = sys.argv[2] if len(sys.argv) > 2 else None


def call(method, path, body=None, headers=None, raw=None):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(BASE + path, data=data, method=method)
    if raw is None and body is not None:
        req.add_header("Content-Type", "application/json")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    if TOKEN:
        req.add_header("Authorization", "Bearer " + TOKEN)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            text = r.read().decode()
            return r.status, (json.loads(text) if text else None)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode())


def expect(status, want, what):
    if status != want:
        raise SystemExit("%s: HTTP %s, wanted %s" % (what, status, want))


s, _ = call("PUT", "/api/v1/streams/py.orders", {"retention": "1d"})
expect(s, 201, "register stream")
s, _ = call("PUT", "/api/v1/streams/py.orders/groups/billing", {"start": "beginning"})
expect(s, 201, "register group")
produced = []
for i in range(3):
    s, r = call("POST", "/api/v1/streams/py.orders/messages", raw=json.dumps({"order": i}).encode(),
                headers={"Content-Type": "application/json", "Sluice-Message-Key": "c-%d" % i})
    expect(s, 201, "produce")
    produced.append(r["id"])
s, r = call("POST", "/api/v1/streams/py.orders/messages:batch", [{"payload": {"order": 3}}, {"payload": {"order": 4}}])
expect(s, 201, "produce batch")
produced += [m["id"] for m in r["messages"]]

consumed = []
while len(consumed) < len(produced):
    s, c = call("POST", "/api/v1/streams/py.orders/groups/billing/claims", {"max": 10, "wait": "5s", "lease": "30s"})
    expect(s, 200, "claim")
    if not c["messages"]:
        raise SystemExit("claim: no messages")
    outcomes = [{"id": m["id"], "outcome": "success"} for m in c["messages"]]
    consumed += [json.loads(m["payload_text"])["order"] for m in c["messages"]]
    s, r = call("POST", "/api/v1/streams/py.orders/groups/billing/claims/%s/outcomes" % c["claim"], {"outcomes": outcomes})
    expect(s, 200, "outcomes")

s, r = call("POST", "/api/v1/queues/py.emails/jobs", {"payload": {"to": "a@example.com"}, "keep_runs": "1h"})
expect(s, 201, "enqueue")
job_id = r["id"]
s, r = call("POST", "/api/v1/queues/py.emails/claims", {"max": 1, "wait": "5s"})
expect(s, 200, "claim job")
job = r["jobs"][0]
s, _ = call("POST", "/api/v1/queues/py.emails/jobs/%d:complete" % job["id"],
            {"claim_token": job["claim_token"], "payload": {"sent": True}})
expect(s, 200, "complete job")
s, run = call("GET", "/api/v1/queues/py.emails/runs/%d" % job_id)
expect(s, 200, "run")
s, err = call("GET", "/api/v1/streams/py.missing")
expect(s, 404, "missing stream")
print(json.dumps({"produced": produced, "consumed": sorted(consumed), "job": job_id, "run_status": run["status"],
                  "error_code": err["error"]["code"]}))
