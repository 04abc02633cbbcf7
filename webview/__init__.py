"""A read-only web view of a conversation tree and of an object's story (`python -m webview`).

It holds no database credentials and no data: every page is read through TreeService and
StoryGraph over gRPC, for the caller whose runtime binding token signed in (docs/web-view.md).
"""
