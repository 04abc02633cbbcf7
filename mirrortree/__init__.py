"""Shared runtime for the Mirrortree services: generated gRPC code (`mirrortree.v1`), server
plumbing, structured logs, rich gRPC errors, time parsing and LSN tokens. Developer tooling (the
local PostgreSQL, the launcher, the story loader) lives in `devtools`, outside the image."""
