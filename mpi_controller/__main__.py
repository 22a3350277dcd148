"""``python -m mpi_controller`` runs the command-line interface."""

from mpi_controller.cli import main

raise SystemExit(main())
