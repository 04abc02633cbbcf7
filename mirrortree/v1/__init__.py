"""Generated gRPC code for mirrortree.v1 (scripts/gen_protos.py). Do not edit."""
