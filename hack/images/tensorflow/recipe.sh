# shellcheck shell=bash disable=SC2034  # sourced by hack/lib/images.sh
# The TensorFlow image: the wheels image with TensorFlow for CPU from PyPI (requirements.txt:
# tensorflow-cpu 2.12.1 and its dependencies, each pinned with its wheel's hash) and the TFJob
# guide's trainer, tf-dist-mnist (/usr/local/bin/tf-dist-mnist, dist_mnist.py here: parameter
# servers and between-graph asynchronous training from TF_CONFIG), the image's command.
IMAGE_BASE=wheels
IMAGE_PIP=requirements.txt
IMAGE_FILES="tensorflow/dist_mnist.py:/usr/local/bin/tf-dist-mnist:0755"
IMAGE_CMD='["/usr/local/bin/tf-dist-mnist"]'
IMAGE_ENV="LANG=C.UTF-8 PYTHONUNBUFFERED=1 TF_CPP_MIN_LOG_LEVEL=1"
