"""Domain `quality`: the gap radar and the golden-set evaluation."""

GROUP = "quality"
