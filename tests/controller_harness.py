"""Runs the controllers in-process (in a thread with its own event loop) against a real API
server, watching one namespace, for integration tests. Wired by
:func:`mpi_controller.app.build_controllers`, as ``mpi-controller run`` wires them."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any, TypeVar

from mpi_controller.app import build_controllers
from mpi_controller.engine.controller import JobController
from mpi_controller.engine.training.framework import TrainingOptions
from mpi_controller.mpi.options import MPIJobOptions
from mpi_controller.options import ServerOptions
from mpi_controller.runtime.manager import Manager
from mpi_controller.runtime.rest import RestClient
from tests.support import wait_for

T = TypeVar("T")
Customize = Callable[[JobController], None]


class InProcessController:
    def __init__(self, kubeconfig: str, options: ServerOptions,
                 customize: Customize | None = None) -> None:
        self.kubeconfig = kubeconfig
        self.options = options
        self.customize = customize
        self.mpijob_controller: JobController | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stop_event: asyncio.Event | None = None
        self.manager: Manager | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._thread, daemon=True)

    def _thread(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # reported by stop()
            self.error = exc

    async def _main(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.stop_event = asyncio.Event()
        client = await RestClient.from_kubeconfig(self.kubeconfig, qps=200, burst=400)
        built = build_controllers(client, self.options)
        controller, = built.controllers
        if self.customize is not None:
            self.customize(controller)
        self.mpijob_controller = controller
        self.manager = Manager(informers=built.informers(), runnables=built.recorders,
                               controllers=[controller.controller], close=client.close,
                               port=None, graceful_shutdown_timeout=5)
        await self.manager.run(self.stop_event)

    def start(self) -> None:
        self.thread.start()
        wait_for(lambda: self.error or (self.manager is not None and self.manager.has_synced()),
                 timeout=30, what="the in-process controller to sync")
        if self.error:
            raise self.error

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the controller's event loop and return its result."""
        assert self.loop is not None
        done: Future[T] = Future()

        def run() -> None:
            try:
                done.set_result(fn())
            except BaseException as exc:
                done.set_exception(exc)

        self.loop.call_soon_threadsafe(run)
        return done.result(timeout=10)

    def idle(self) -> bool:
        """No key queued, waiting for a delay (the queue's or the pod-update batch's), or
        being synced."""
        ctl = self.mpijob_controller
        assert ctl is not None
        queue = ctl.controller.queue
        return self.call(lambda: not (queue.len() or queue._processing or queue._waiting
                                      or ctl.held()))

    def stop(self) -> None:
        if self.loop is not None and self.stop_event is not None:
            self.loop.call_soon_threadsafe(self.stop_event.set)
        self.thread.join(timeout=30)
        assert not self.thread.is_alive(), "controller did not stop"
        if self.error:
            raise self.error


@contextmanager
def training_controller(kubeconfig: str, namespace: str, scheme: str,
                        **training: Any) -> Iterator[InProcessController]:
    """The controller of one training-operator kind (``tfjob``, ``pytorchjob``), watching
    ``namespace``; ``training``: :class:`TrainingOptions` fields."""
    options = ServerOptions(namespace=namespace, training=TrainingOptions(**training),
                            enabled_schemes=(scheme,))
    ctl = InProcessController(kubeconfig, options)
    ctl.start()
    try:
        yield ctl
    finally:
        ctl.stop()


@contextmanager
def running_controller(kubeconfig: str, namespace: str, *, customize: Customize | None = None,
                       **config: Any) -> Iterator[InProcessController]:
    options = ServerOptions(namespace=namespace, kinds={"mpijob": MPIJobOptions(**config)})
    ctl = InProcessController(kubeconfig, options, customize)
    ctl.start()
    try:
        yield ctl
    finally:
        ctl.stop()
