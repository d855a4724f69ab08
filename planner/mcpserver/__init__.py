"""`planner mcp`: the planner's bundles, decision surface and runs served over the Model Context Protocol.

Named mcpserver, not mcp, so `import mcp` always finds the SDK. Built on the official SDK (`mcp`): no protocol
code here, only the tools (tools.py), the resources (resources.py) and the transports (server.py).
"""
