"""Shared runtime for the Mirrortree services: generated gRPC code (`mirrortree.v1`), server
plumbing, structured logs, rich gRPC errors, time parsing and the embedded local PostgreSQL."""
