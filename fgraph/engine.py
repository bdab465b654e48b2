"""The runtime of a compiled plan: each step's message computed from the run's state and set in it.

The messages, and the incoming messages and marginals derived from them, are
the run's state (:class:`fgraph.run_state.RunState`); the engine computes the
message of a step from it — the step's rule on the inputs the compiler bound,
then the node's power, the incoming log-scales, damping and the check for
non-finite numbers (:mod:`fgraph.numerical_checks`) — and sets it there.

Sum-product rules compute messages as if their incoming messages were
normalised; the engine adds the incoming log-scales, so that every message
carries the scale of the evidence of the sub-graph behind it. Nodes whose
rules weigh the scales themselves (a mixture weighs its inputs by their
evidence; a compound node combines many time steps) set
``rules_handle_scales`` or ``couples_batch`` and receive scaled messages.
"""
from __future__ import annotations

import numpy as np

from fgraph.collection import cycle_collection_paused
from fgraph.numerical_checks import check_message, rule_failure
from fgraph.plan import Plan
from fgraph.run_state import RunState
from fgraph.schedule import needed_steps


class Engine:
    """One run of a compiled plan: its state (:attr:`state`) and the updates that change it.

    ``data``: variable name -> the array bound to each observed variable, or ``None`` for an engine
    without data (the one computing the messages of constants, :func:`fgraph.inference.fold_constants`).
    The plan is only read.
    """

    def __init__(self, plan: Plan, data: dict | None):
        self.plan = plan
        self.state = RunState(plan, data)

    # ------------------------------------------------------------ updates
    def update(self, step, damping: float = 0.0) -> None:
        """Compute the message of ``step`` (see :meth:`message`) and set it: the interpreted update, the
        reference of the generated sweeps (:mod:`fgraph.codegen`) and the one on-demand steps take."""
        message = step.folded  # a message of constants only, computed by the compiler
        if message is None:
            message = self.message(step, damping)
            if step.binding.cluster_inputs:
                self.state.record_cluster_inputs(step)
        self.state.set_outbound(step.socket, message)

    def message(self, step, damping: float = 0.0):
        """The message of ``step`` from the current state: its rule's output (the first iteration's or the
        steady state's) finished as the step's binding says (:meth:`~fgraph.binding.StepBinding.finish`:
        batch, power, incoming log-scales, damping) and checked for NaN and infinities."""
        binding, state, node_plan = step.binding, self.state, step.node_plan
        try:
            message = binding.calls[1 if state.steady else 0].run(state, node_plan)
        except (ValueError, ArithmeticError, np.linalg.LinAlgError) as error:
            failure = rule_failure(step, error, state)
            if failure is error:
                raise
            raise failure from error
        scale = (state.incoming_log_scale(node_plan.row, binding.message_positions)
                 if binding.adds_scales and binding.message_positions else None)
        message = binding.finish(message, scale, state.outbound[step.socket.index], damping)
        check_message(message, step, state.graph, state.data)
        return message

    def sweep(self, damping: float = 0.0) -> None:
        """One sweep of the plan: its generated function (:mod:`fgraph.codegen`), or the interpreted updates."""
        kernel = self.plan.derived.sweep_function(self.plan, self.state.steady)
        if kernel is not None:
            kernel(self, damping)
        else:
            for step in self.plan.sweep:
                self.update(step, damping)
        self.state.steady = True

    def complete(self, slots: list | None = None) -> None:
        """Compute the messages of the plan's ``on_demand`` steps that the beliefs of ``slots`` need
        (``None``: all of them), once, from the messages of the last sweep.

        Only exact plans leave steps on demand, and their messages are final after one sweep, so these are
        the values the full sweep would have given (:func:`fgraph.plan._split_by_demand`).
        """
        pending = self.state.pending
        if not pending:
            return
        on_demand = self.plan.on_demand_by_socket
        wanted = set(pending) if slots is None else needed_steps(on_demand, slots, pending)
        with cycle_collection_paused(promote_at=0):  # as in a sweep: the new messages stay with the result
            for index in sorted(wanted, key=self.plan.on_demand_position.__getitem__):  # in the schedule's order
                self.update(on_demand[index])
                pending.discard(index)
