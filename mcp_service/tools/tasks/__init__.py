"""Long tool calls as MCP tasks (the ``io.modelcontextprotocol/tasks`` extension): ``extension`` (the SDK
extension: task-returning calls, ``tasks/get``, ``tasks/update``, ``tasks/cancel``) and ``store`` (the tasks this
process runs, per caller, bounded)."""

from mcp_service.tools.tasks.extension import TASKS, TasksExtension

__all__ = ["TASKS", "TasksExtension"]
