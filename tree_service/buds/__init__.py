"""Buds: answers streamed chunk by chunk under a lease, sealed or frozen once."""
