# shellcheck shell=bash disable=SC2034  # sourced by hack/lib/images.sh
# The Horovod image: the mpi-wheels image (Open MPI, Python 3) with TensorFlow for CPU 2.12.1
# from PyPI (requirements.txt, pinned by hash), Horovod 0.28.1 built from its sdist against that
# TensorFlow with MPI and Gloo (horovod_wheel.sh, the wheel cached by content key), and
# tensorflow/benchmarks' entry point as the MPI Operator's tensorflow-benchmarks example runs it:
# scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py under the working directory /benchmarks
# (tf_cnn_benchmarks.py here: a synthetic-data Horovod benchmark printing images/sec per rank),
# and the elastic example's /examples/elastic/tensorflow2_mnist_elastic.py (written here: elastic
# Horovod training that follows the workers horovodrun discovers).
IMAGE_BASE=mpi-wheels
IMAGE_PIP=requirements.txt
IMAGE_PIP_HOOK=horovod/horovod_wheel.sh
IMAGE_FILES="horovod/tf_cnn_benchmarks.py:/benchmarks/scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py:0755
horovod/tensorflow2_mnist_elastic.py:/examples/elastic/tensorflow2_mnist_elastic.py:0755"
IMAGE_WORKDIR=/benchmarks
IMAGE_ENV="LANG=C.UTF-8 PYTHONUNBUFFERED=1 TF_CPP_MIN_LOG_LEVEL=2"
