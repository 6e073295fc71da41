"""Write the playground's click events to Kafka: 1000 clicks per page in every 15-second window.

    python examples/click_event_generator.py --bootstrap-servers 127.0.0.1:9092 --rate 1000
"""

from kindling.playground.click_generator import main

if __name__ == "__main__":
    raise SystemExit(main())
