extension ZoneRules {
    #if DEBUG
    /// Traps if the tables are inconsistent. Runs at the end of every initializer in debug builds;
    /// compiles to nothing in release.
    func _checkInvariants() {
        precondition(_offsets.count == _times.count + 1 && _typeIndices.count == _offsets.count,
                     "table arrays out of step")
        for i in _times.indices.dropFirst() { precondition(_times[i - 1] < _times[i], "transitions not ascending") }
        precondition(_fileEnd <= _ruleBefore && _ruleBefore <= _ruleFrom, "regions out of order")
        if _rule != nil {
            for t in _times {
                precondition(t < _fileEnd || (t >= _ruleBefore && t < _ruleFrom), "table entry inside a rule region")
            }
            if _fileEnd == .min, let first = _times.first { precondition(first > _ruleBefore, "entry at the start of the table") }
        }
        for (k, i) in _typeIndices.enumerated() {
            precondition(Int(i) < _types.count, "type index out of range")
            precondition(Int(_offsets[k]) == _types[Int(i)].utcOffsetSeconds, "offset table out of step")
            if k > 0 { precondition(_typeIndices[k - 1] != i, "no-op transition in the table") }
        }
        for (k, t) in _types.enumerated() {
            precondition(!_types[..<k].contains(t), "duplicate type")
            precondition((-89_999...93_599).contains(t.utcOffsetSeconds), "offset out of range")
        }
        if _rule != nil {
            precondition(Int(_ruleStandardType) < _types.count && Int(_ruleDaylightType) < _types.count,
                         "rule type out of range")
            precondition(_ruleFrom < .max || _ruleBefore > .min, "rule without a region")
        } else {
            precondition(_fileEnd == .min && _ruleBefore == .min && _ruleFrom == .max, "rule regions without a rule")
        }
        precondition(_buckets == Self.buckets(_times), "bucket index out of step")
        for i in _typeIndices {
            let o = Int64(_types[Int(i)].utcOffsetSeconds)
            precondition(_minOffset <= o && o <= _maxOffset, "offset bounds")
        }
    }
    #endif
}
