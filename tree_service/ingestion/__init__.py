"""Story-graph ingestion: review results, hubs, message sources, sources, preferences."""
