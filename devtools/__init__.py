"""Developer tooling: the local PostgreSQL primary + replica (`devtools.pgcluster`), the
`make run` launcher, the story-file loader, the binding-token command and the demo data.

None of it runs in a deployment: the service image leaves this package out, and the services
import nothing from it.
"""
