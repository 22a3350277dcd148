"""Unit tests of mpi_controller.runtime (no cluster, manual clock)."""
