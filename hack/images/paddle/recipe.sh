# shellcheck shell=bash disable=SC2034  # sourced by hack/lib/images.sh
# The Paddle image: the wheels image with PaddlePaddle for CPU from PyPI (requirements.txt:
# paddlepaddle 3.3.1 and its dependencies, each pinned with its wheel's hash) and the
# paddle-allreduce program (/usr/local/bin/paddle-allreduce, paddle_allreduce.py here), a trainer
# for `python3 -m paddle.distributed.launch`: init_parallel_env and an all_reduce across the
# PaddleJob's pods. The working directory is /tmp, where the launcher writes its log directory.
IMAGE_BASE=wheels
IMAGE_PIP=requirements.txt
IMAGE_FILES="paddle/paddle_allreduce.py:/usr/local/bin/paddle-allreduce:0755"
IMAGE_CMD='["python3", "-m", "paddle.distributed.launch", "/usr/local/bin/paddle-allreduce"]'
IMAGE_WORKDIR=/tmp
IMAGE_ENV="LANG=C.UTF-8 PYTHONUNBUFFERED=1"
