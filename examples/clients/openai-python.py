"""One chat completion through svc with the official `openai` package (pip install openai).

Run: SVC_API_KEY=svc_... python openai-python.py
"""
import os

from openai import OpenAI

client = OpenAI(
    base_url=os.environ.get("SVC_BASE_URL", "http://localhost:8080/v1"),
    api_key=os.environ["SVC_API_KEY"],  # an svc_ key, never a provider's key
)

reply = client.chat.completions.create(
    model="auto",  # or "route/<name>", or "<provider>:<model>"
    messages=[{"role": "user", "content": "Say hello in one word."}],
)
print(reply.choices[0].message.content)
