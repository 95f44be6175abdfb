"""A Celery app as its users write one, for rungs' end-to-end test.

Its queue is a quorum queue on a topic exchange, so Celery 5.5 sends a
task's countdown through RabbitMQ native delayed delivery: kombu's
celery_delayed_27..0 ladder, which the worker declares when it starts.

    python3 tasks.py worker                  run a worker (solo pool)
    python3 tasks.py publish PREFIX N SECS   send N tasks PREFIX-0.. with that countdown

BROKER_URL names the broker and vhost; the worker appends one JSON line
per task it runs to OUT: the task id and when it ran.
"""
import json
import os
import sys
import time

from celery import Celery
from kombu import Exchange, Queue

app = Celery("rungs_e2e", broker=os.environ["BROKER_URL"])
app.conf.task_queues = [
    Queue("emails", Exchange("emails", type="topic"), routing_key="emails",
          queue_arguments={"x-queue-type": "quorum"}),
]
app.conf.task_default_queue = "emails"
app.conf.task_default_exchange = "emails"
app.conf.task_default_exchange_type = "topic"
app.conf.task_default_routing_key = "emails"
app.conf.broker_transport_options = {"confirm_publish": True}
app.conf.broker_connection_retry_on_startup = True


@app.task(name="send", bind=True)
def send(self, n):
    with open(os.environ["OUT"], "a") as f:
        f.write(json.dumps({"id": self.request.id, "n": n, "at": time.time()}) + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "worker":
        app.worker_main(["worker", "--loglevel=INFO", "--pool=solo", "--queues=emails", "--without-gossip", "--without-mingle"])
    elif sys.argv[1] == "publish":
        prefix, n, secs = sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
        for i in range(n):
            send.apply_async(args=[i], countdown=secs, task_id="%s-%d" % (prefix, i))
        print("published %d" % n, flush=True)
