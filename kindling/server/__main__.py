"""``python -m kindling.server``: the job manager process that ``kindling cluster start`` launches."""

from kindling.server.jobmanager import main

raise SystemExit(main())
