/* pi: every MPI rank integrates 4/(1+x^2) over its share of [0,1]; rank 0 sums the shares.
 * Prints one line per rank ("rank R of N on HOST") and then the result ("pi is approximately
 * 3.14159265..., error ... from N ranks"), so a log shows which hosts took part. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    int rank, size, len;
    char host[MPI_MAX_PROCESSOR_NAME];
    const long steps = argc > 1 ? atol(argv[1]) : 10000000L;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    memset(host, 0, sizeof host);
    MPI_Get_processor_name(host, &len);

    char *hosts = NULL;
    if (rank == 0) hosts = calloc((size_t)size, sizeof host);
    MPI_Gather(host, sizeof host, MPI_CHAR, hosts, sizeof host, MPI_CHAR, 0, MPI_COMM_WORLD);

    const double width = 1.0 / (double)steps;
    double part = 0.0, total = 0.0;
    for (long i = rank; i < steps; i += size) {
        const double x = ((double)i + 0.5) * width;
        part += 4.0 / (1.0 + x * x);
    }
    part *= width;
    MPI_Reduce(&part, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);

    if (rank == 0) {
        for (int r = 0; r < size; r++) printf("rank %d of %d on %s\n", r, size, hosts + r * sizeof host);
        printf("pi is approximately %.10f, error %.2e from %d ranks\n", total, fabs(total - M_PI), size);
        free(hosts);
    }
    /* Every rank is done communicating before any finalizes: with MPICH 4.0 over UCX's TCP
     * transport, a rank that finalizes while its peer still flushes can leave both waiting. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
