"""A Hugging Face Hub endpoint on 127.0.0.1 that accepts uploads: the test double for publishing,
in the spirit of the simulated GitHub. It speaks what `huggingface_hub`'s real client sends and
expects, for dataset repositories:

    POST /api/repos/create                         (409 still carries `url`)
    POST /api/validate-yaml
    POST /api/datasets/ORG/NAME/preupload/REV      (uploadMode, shouldIgnore, remote oid)
    POST /datasets/ORG/NAME.git/info/lfs/objects/batch   (basic transfer; known objects: no actions)
    PUT  /lfs/OID  +  POST /lfs/OID/verify
    POST /api/datasets/ORG/NAME/commit/REV         (NDJSON: header, file, lfsFile, deletedFile)
    POST /api/datasets/ORG/NAME/tag/REV
    GET  /api/datasets/ORG/NAME[/revision/REV], /refs, /tree/REV[/PATH] (Link paging)
    POST /api/datasets/ORG/NAME/paths-info/REV
    GET|HEAD /datasets/ORG/NAME/resolve/REV/PATH   (ETag, X-Repo-Commit, X-Linked-Etag,
                                                    X-Linked-Size, X-Error-Code, Range)

Storage is content-addressed (`objects/SHA256`, each written to a temporary name and renamed
once its hash checks) and a commit is atomic: the commit record is written first, then the
branch moves with one rename of the repository's refs file, so a dropped connection or an error
at any point leaves a revision complete or absent. Faults (`HubFault`) make chosen requests
answer 500 or drop the connection mid-body; `requests` and the byte counters record traffic.

    with serve_hub(tmp_path / "hub", tokens={"hf_secret": "alice"}) as hub:
        HfApi(endpoint=hub.url, token="hf_secret").create_repo("org/ds", repo_type="dataset")
"""

from gharuntime.sim.hub.server import HubFault, HubServer, HubTraffic, serve_hub
from gharuntime.sim.hub.store import git_blob_oid

__all__ = ["HubFault", "HubServer", "HubTraffic", "git_blob_oid", "serve_hub"]
