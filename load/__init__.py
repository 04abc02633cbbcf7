"""`make load`: a mixed load on a Mirrortree deployment, with a zero-lost verification.

Locust paces the users and keeps the statistics; the calls themselves are asyncio (grpc.aio and
the MCP SDK client) on one event loop in its own thread (load.bridge), so Locust runs without
gevent's monkey-patching. See docs/load.md.
"""
