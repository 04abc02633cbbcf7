"""The node core: trees and their nodes as every aggregate reads and appends them."""
