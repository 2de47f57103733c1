"""The REST service and report pages (contract section 4).

``api`` depends on the engine (``diagnose``); the engine never imports ``api``.
Build the application with :func:`api.app.create_app`.
"""
