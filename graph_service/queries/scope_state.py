"""What every read reports about its scope, in the statement that opens its transaction.

The read revision (the newest graph revision in the scope), how many results and object copies
the scope holds, the newest results with their coverage ($2 at most, column by column: one
row, so that what an opening reads with it is sent and decoded once), the gaps every result
reports (newest first, "result: gap") and the source types any of them excluded, and the time
of the read. A read that needs more at its start has an opening of its own that adds columns
to the one-row part (search_opening.sql, context_opening.sql).
"""

from graph_service.queries import load

# Gaps listed at most; the statements read one more (LIMIT 51), which says the list goes on.
GAPS_LISTED = 50

SCOPE_STATE = load("scope_state")
